// The server's custom messages for the memory views: their method names here, their payload
// types generated from the server's pydantic models (generated/protocol.ts, written by
// scripts/gen_types.py; never edited by hand).
export type {
  AgentChoice,
  AgentSkill,
  AgentSkillsResult,
  AgentSkillsResults,
  AgentsParams,
  AgentsResponse,
  AddMemoryParams,
  AddMemoryResult,
  AskUserParams,
  AskUserReply,
  ContextSection,
  Dialect,
  ExtractResult,
  InboxActionResult,
  InboxEntry,
  InboxResult,
  JitLoadedEvent,
  AgentListedFile,
  EditorListResult,
  MatrixCell,
  MatrixResult,
  NameParams,
  ReadyEvent,
  ShowParams,
  ShowResponse,
  SkillItem,
  SkillsResult,
  SourceLink,
  TreeAgent,
  TreeFile,
  TreeFolder,
  TreeImport,
  TreeResponse,
  UriParams,
} from "./generated/protocol";

export const SHOW = "memlens/show";
/** The agents to offer: the chosen ones (pinned, else detected) first. */
export const AGENTS = "memlens/agents";
export const LIST = "memlens/list";
export const REFRESH = "memlens/refresh";
export const TREE = "memlens/memoryTree";
/** Server → client notification: what opening a file loaded just in time. */
export const JIT_LOADED = "memlens/jitLoaded";
export const ADD_MEMORY = "memlens/addMemory";
/** Server → client requests of the memory manager. */
export const MEMORY_APPROVE = "memlens/memory/approve";
export const ASK_USER = "memlens/askUser";
export const SKILLS = "memlens/skills";
export const INBOX = "memlens/inbox";
export const INBOX_ACCEPT = "memlens/inbox/accept";
export const INBOX_REJECT = "memlens/inbox/reject";
export const EXTRACT_SKILLS = "memlens/skills/extract";
/** The skills each other agent in use lists (Claude Code, Codex), as it lists them. */
export const AGENT_SKILLS = "memlens/agentSkills";
/** The agent matrix of a workspace folder (every memory file × every agent). */
export const MATRIX = "memlens/matrix";
