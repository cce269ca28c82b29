// A language model provider (stable API `vscode.lm.registerLanguageModelChatProvider`) that
// writes every request VS Code's chat gives it to $MEMLENS_ORACLE_OUT/request-N.json and
// answers "ok"; with MEMLENS_ORACLE_QUERY set it also opens the chat in agent mode on this
// model and sends that query, then records how far that got in $MEMLENS_ORACLE_OUT/progress.log.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

const OUT = process.env.MEMLENS_ORACLE_OUT;
let count = 0;

function note(line) {
  if (!OUT) return;
  fs.mkdirSync(OUT, { recursive: true });
  fs.appendFileSync(path.join(OUT, 'progress.log'), `${new Date().toISOString()} ${line}\n`);
}

function part(p) {
  if (p instanceof vscode.LanguageModelTextPart) return { type: 'text', value: p.value };
  if (p instanceof vscode.LanguageModelToolCallPart) return { type: 'toolCall', name: p.name, callId: p.callId, input: p.input };
  if (p instanceof vscode.LanguageModelToolResultPart) return { type: 'toolResult', callId: p.callId, content: (p.content || []).map(part) };
  if (typeof vscode.LanguageModelDataPart === 'function' && p instanceof vscode.LanguageModelDataPart) {
    return { type: 'data', mimeType: p.mimeType, text: Buffer.from(p.data).toString('utf8') };
  }
  return { type: 'other', value: String(p && (p.value ?? JSON.stringify(p))) };
}

function activate(context) {
  note('activated');
  const model = {
    id: 'recorder', name: 'Recorder', family: 'recorder', version: '1', tooltip: 'records requests',
    detail: 'Memory Lens test', maxInputTokens: 200000, maxOutputTokens: 8000,
    capabilities: { toolCalling: true, imageInput: false },
  };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('memlens-recorder', {
    provideLanguageModelChatInformation() { note('asked for models'); return [model]; },
    async provideLanguageModelChatResponse(m, messages, options, progress) {
      count += 1;
      const record = {
        model: m.id,
        messages: messages.map((msg) => ({ role: msg.role, name: msg.name, content: msg.content.map(part) })),
        tools: (options.tools || []).map((t) => t.name),
      };
      if (OUT) fs.writeFileSync(path.join(OUT, `request-${count}.json`), JSON.stringify(record, null, 2));
      note(`request ${count}: ${messages.length} messages`);
      progress.report(new vscode.LanguageModelTextPart('ok'));
    },
    async provideTokenCount(m, text) {
      const s = typeof text === 'string' ? text : JSON.stringify(text);
      return Math.ceil(s.length / 4);
    },
  }));
  note('provider registered');
  const query = process.env.MEMLENS_ORACLE_QUERY;
  if (query) {
    context.subscriptions.push(vscode.commands.registerCommand('memlensOracle.send', () => send(query)));
    setTimeout(() => start(query), 5000);
  }
}

// The built-in Copilot Chat is disabled until the chat set-up (a GitHub sign-in) completes:
// enable it (Extensions: Enable All Extensions), give it time to start, then send.
async function start(query) {
  try {
    const before = vscode.extensions.getExtension('GitHub.copilot-chat');
    note(`copilot-chat before enabling: ${before ? `found, active=${before.isActive}` : 'absent (disabled)'}`);
    if (!before && process.env.MEMLENS_ORACLE_ENABLE !== '0') {
      await vscode.commands.executeCommand('workbench.extensions.action.enableAll');
      note('ran workbench.extensions.action.enableAll');
      for (let i = 0; i < 60 && !vscode.extensions.getExtension('GitHub.copilot-chat'); i++) {
        await new Promise((r) => setTimeout(r, 1000));
      }
      const after = vscode.extensions.getExtension('GitHub.copilot-chat');
      note(`copilot-chat after enabling: ${after ? `found, active=${after.isActive}` : 'still absent'}`);
      if (after && !after.isActive) {
        try { await after.activate(); note('copilot-chat activated'); } catch (e) { note(`copilot-chat activation failed: ${e && e.message}`); }
      }
      await new Promise((r) => setTimeout(r, 5000));
    }
  } catch (e) {
    note(`enabling failed: ${e && e.stack || e}`);
  }
  await send(query);
}

async function send(query) {
  try {
    const models = await vscode.lm.selectChatModels({ vendor: 'memlens-recorder' });
    note(`selectChatModels: ${models.map((m) => m.id).join(',') || 'none'}`);
    const all = await vscode.lm.selectChatModels({});
    note(`all models: ${all.map((m) => `${m.vendor}/${m.id}`).join(',') || 'none'}`);
    const commands = await vscode.commands.getCommands(true);
    note(`chat commands: ${commands.filter((c) => c.startsWith('workbench.action.chat.open')).join(',')}`);
    const copilot = vscode.extensions.getExtension('GitHub.copilot-chat');
    note(`copilot-chat: ${copilot ? `found, active=${copilot.isActive}` : 'absent'}`);
    // MEMLENS_ORACLE_ATTACH: workspace-relative paths (comma-separated) attached to the query,
    // the files an `applyTo` pattern is matched against.
    const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
    const attach = (process.env.MEMLENS_ORACLE_ATTACH || '').split(',').filter(Boolean)
      .map((rel) => vscode.Uri.joinPath(folder.uri, rel));
    note(`attaching: ${attach.map((u) => u.fsPath).join(',') || 'nothing'}`);
    await vscode.commands.executeCommand('workbench.action.chat.open', {
      query, mode: 'agent', isPartialQuery: false,
      modelSelector: { vendor: 'memlens-recorder', id: 'recorder' },
      ...(attach.length ? { attachFiles: attach } : {}),
    });
    note('chat.open returned');
  } catch (e) {
    note(`send failed: ${e && e.stack || e}`);
  }
}

function deactivate() {}
module.exports = { activate, deactivate };
