-- A headless Neovim as a user sets it up (docs/editors.md), for tests/test_neovim.py: start the
-- Memory Lens server over stdio on the folder MEMLENS_NVIM_ROOT, open its GEMINI.md, wait for
-- the diagnostics, ask for two hovers, and write what Neovim got to MEMLENS_NVIM_OUT as JSON.
-- Works with Neovim 0.7 (vim.lsp.start_client) and newer (vim.lsp.start).
local root = vim.env.MEMLENS_NVIM_ROOT
local out = vim.env.MEMLENS_NVIM_OUT
local cmd = vim.fn.json_decode(vim.env.MEMLENS_NVIM_CMD)
local report = { events = {} }

local function finish()
  local file = io.open(out, "w")
  file:write(vim.fn.json_encode(report))
  file:close()
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/GEMINI.md"))
  local bufnr = vim.api.nvim_get_current_buf()
  local config = {
    name = "memlens",
    cmd = cmd,
    root_dir = root,
    -- trust and the agents: the initializationOptions the server reads (docs/editors.md)
    init_options = { memlens = { trusted = true, home = root .. "/.home", agents = { "gemini" } } },
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  report.client = client_id ~= nil
  table.insert(report.events, "started")

  local got = vim.wait(90000, function() return #vim.diagnostic.get(bufnr) > 0 end, 100)
  report.waited_for_diagnostics = got
  report.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(report.diagnostics, {
      lnum = d.lnum, col = d.col, severity = d.severity, message = d.message,
      code = d.code, source = d.source,
    })
  end

  local function hover(line, character)
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = line, character = character },
    }
    local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 30000) or {}
    for _, answer in pairs(answers) do
      if answer.result and answer.result.contents then
        local contents = answer.result.contents
        if type(contents) == "table" and contents.value then return contents.value end
        return vim.fn.json_encode(contents)
      end
      if answer.err then return "error: " .. vim.fn.json_encode(answer.err) end
    end
    return vim.NIL
  end
  -- on `@./docs/style.md` (line 7), and on line 1 (the merged context)
  report.hover_import = hover(6, 4)
  report.hover_first_line = hover(0, 2)
end)
if not ok then report.error = tostring(err) end
finish()
