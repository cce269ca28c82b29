// Reads a JSON Schema on stdin (scripts/gen_types.py makes it from the server's protocol
// models) and writes its TypeScript types to stdout, with json-schema-to-typescript.
import { compile } from "json-schema-to-typescript";

const chunks = [];
for await (const chunk of process.stdin) {
  chunks.push(chunk);
}
const schema = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const banner = process.argv[2] ?? "";
const typescript = await compile(schema, schema.title, {
  bannerComment: banner,
  // An object the schema does not declare open (a `dict` field) has exactly its fields.
  additionalProperties: false,
  strictIndexSignatures: true,
  unknownAny: true,
  style: { printWidth: 100, singleQuote: false, trailingComma: "all" },
});
process.stdout.write(typescript);
