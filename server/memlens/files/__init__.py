"""Shared by every agent — the file system: reading memory files safely and once (`fsread`),
the path policy of every read and write the chat makes (`pathpolicy`), Node.js path and
string semantics every agent's paths follow (`nodecompat`), project roots (`roots`), and
names from the disk printed safely (`output`)."""
