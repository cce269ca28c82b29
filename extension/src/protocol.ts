// Shapes of the server's custom messages (mirrors of the pydantic models in memlens/lsp).
export interface TreeImport {
  text: string;
  target: string;
  line: number;
  exists: boolean;
}

export interface TreeFile {
  path: string;
  tier: string;
  chars: number | null;
  errors: number;
  warnings: number;
  imports: TreeImport[];
  note?: string | null;
}

/** Another agent's memory in the same folder (Claude Code's, or the AGENTS.md files). */
export interface TreeAgent {
  agent: "claude" | "agents";
  files: TreeFile[];
}

export interface TreeFolder {
  folder: string;
  mode: string;
  trusted: boolean;
  files: TreeFile[];
  otherAgents?: TreeAgent[];
  /** Restricted Mode: why project memory is missing and what is shown anyway. */
  notice?: string | null;
  /** The trusted folders file, when a DO_NOT_TRUST rule there (not the editor) is why. */
  trustRules?: string | null;
}

export interface TreeResponse {
  folders: TreeFolder[];
}

/** Where one file's text lies in a rendered context (0-based lines; startLine names the path). */
export interface ContextSection {
  path: string;
  startLine: number;
  endLine: number;
}

export interface ShowResponse {
  dialect?: "gemini" | "claude" | "agents";
  content: string;
  files: string[];
  fileCount: number;
  mode: string;
  trusted: boolean;
  prompt: string;
  sessionMemory: string;
  /** Characters of the loaded files (imports expanded): the Memory view's figures summed. */
  chars?: number;
  /** e.g. "2 memory files · 1,391 chars", as the code lens says it. */
  summary?: string;
  /** Restricted Mode: why project memory is missing and what is shown anyway. */
  notice?: string | null;
  /** The trusted folders file, when a DO_NOT_TRUST rule there (not the editor) is why. */
  trustRules?: string | null;
  sections?: ContextSection[];
}

export interface ListedFile {
  path: string;
  tier: string;
  chars: number | null;
}

export interface ListResponse {
  cwd: string;
  mode: string;
  files: ListedFile[];
  fileCount: number;
}

export interface JitLoaded {
  uri: string;
  files: Array<{ path: string; chars: number }>;
  context: string;
  /** What Claude Code adds for the opened file (a subfolder's CLAUDE.md, a matching rule). */
  claude?: Array<{ path: string; chars: number; reason: string }>;
}

export const SHOW = "memlens/show";
export const LIST = "memlens/list";
export const REFRESH = "memlens/refresh";
export const TREE = "memlens/memoryTree";
export const JIT_LOADED = "memlens/jitLoaded";

export interface AddMemoryResult {
  managed?: boolean;
  path: string;
  description: string;
  success: boolean;
  message: string;
  diff?: string;
  proposed?: string;
  /** The memory manager has no Gemini API key: offer Set Gemini API Key. */
  needsKey?: boolean;
}

export const ADD_MEMORY = "memlens/addMemory";
