// Start-up time in the real VS Code (docs/reference.md "Benchmarks", the editor rows): a fresh
// window on a copy of the demo, GEMINI.md opened as soon as the explorer shows it, the Problems
// panel open; waits for the demo's memlens problem (import-not-found, docs/deploy.md) to be listed.
// The extension writes its milestones (activate, spawn, initialized, ready, opened,
// firstDiagnostic; wall-clock ms) to $MEMLENS_TIMINGS_FILE (run-e2e.sh sets it); the page gives VS
// Code's own marks (navigation start, workbench started). All on one clock, they go to
// ARTIFACTS/timings.json, which `memlens bench` prints when present. Fails only when the problem
// does not show; the goals (ready within 2 s of activation, first diagnostics within 1 s of ready)
// are reported. MEMLENS_STARTUP_NAME (default startup) names the screenshot and timings file;
// MEMLENS_STARTUP_ROUNDS=cold measures only the first window (the offline test does).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runScenario, workbenchUrl, copyWorkspace, openWorkbench, openFromExplorer, waitInPage,
  screenshot, log, ARTIFACTS, openProblemsPanel,
} from './lib/vscode.mjs';

const timingsFile = process.env.MEMLENS_TIMINGS_FILE;
const name = process.env.MEMLENS_STARTUP_NAME || 'startup';

// The Problems panel's rows with source memlens, as "code file" strings.
const memlensProblems = () => [...document.querySelectorAll('.markers-panel .monaco-list-row')]
  .map((row) => row.querySelector('.marker-source')?.textContent === 'memlens'
    ? row.querySelector('.marker-code')?.textContent : null)
  .filter(Boolean);

// One window: returns its figures (ms).
async function measure(page, step, cleanup, round) {
  step(`${round}: copy the demo`);
  const { root, workspace } = copyWorkspace();
  cleanup(() => rmSync(root, { recursive: true, force: true }));

  step(`${round}: open the workbench on the copy`);
  await openWorkbench(page, workbenchUrl(workspace), { expect: ['GEMINI.md'] });
  const workbenchVisible = Date.now();

  step(`${round}: open GEMINI.md`);
  await openFromExplorer(page, 'GEMINI.md');

  step(`${round}: open the Problems panel (Ctrl+Shift+M)`);
  const panel = await openProblemsPanel(page);

  step(`${round}: wait for a memlens problem (import-not-found) in the Problems panel`);
  await waitInPage(page, 'import-not-found from memlens in Problems',
    `(${memlensProblems})().includes('import-not-found')`, null,
    { describe: `(${memlensProblems})()` });
  const problemsShown = Date.now();
  await screenshot(page, round === 'cold' ? name : `${name}-${round}`);

  step(`${round}: collect the timings`);
  const marks = await page.evaluate(() => ({
    timeOrigin: performance.timeOrigin,
    marks: Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])),
  }));
  const navigationStart = marks.timeOrigin;
  const vscodeMark = (n) => (n in marks.marks ? navigationStart + marks.marks[n] : null);
  const events = {};
  if (timingsFile && existsSync(timingsFile)) {
    // One line per milestone of every window's extension host: keep this window's (its folder).
    for (const line of readFileSync(timingsFile, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      let e;
      try { e = JSON.parse(line); } catch { continue; }
      if (e.folder === workspace && !(e.event in events)) events[e.event] = e;
    }
  }
  const at = (n) => events[n]?.t ?? null;
  const diff = (a, b) => (a != null && b != null ? b - a : null);
  const workbenchStarted = vscodeMark('code/didStartWorkbench');
  const result = {
    workbench: {
      navigationToWorkbenchStarted: diff(navigationStart, workbenchStarted),
      navigationToExplorerShown: diff(navigationStart, workbenchVisible),
    },
    extension: {
      navigationToActivation: diff(navigationStart, at('activate')),
      activationToSpawn: diff(at('activate'), at('spawn')),
      activationToInitialized: diff(at('activate'), at('initialized')),
      activationToReady: diff(at('activate'), at('ready')),
      activationToFirstDiagnostic: diff(at('activate'), at('firstDiagnostic')),
      readyToFirstDiagnostic: diff(at('ready'), at('firstDiagnostic')),
      openedToFirstDiagnostic: diff(at('opened'), at('firstDiagnostic')),
      firstDiagnosticAfterReadyOrOpen: diff(Math.max(at('ready') ?? 0, at('opened') ?? 0) || null, at('firstDiagnostic')),
      indexSeconds: events.ready?.indexSeconds ?? null,
    },
    // The server's own marks (wall clock, sent with memlens/ready): where the start goes.
    server: (() => {
      const m = events.ready?.marks || {};
      return {
        spawnToInterpreterUp: diff(at('spawn'), m.launched),
        imports: diff(m.launched, m.serverCreated),
        serverCreatedToInitialize: diff(m.serverCreated, m.initialize),
        initializeToInitialized: diff(m.initialize, m.initialized),
        index: diff(m.initialized, m.ready),
        readyToClient: diff(m.ready, at('ready')),
      };
    })(),
    ui: {
      navigationToProblemsShown: diff(navigationStart, problemsShown),
      activationToProblemsShown: diff(at('activate'), problemsShown),
    },
    events: Object.fromEntries(Object.entries(events).map(([k, v]) => [k, v.t - navigationStart])),
    // VS Code's own performance marks (ms after navigation start), for context.
    vscodeMarks: Object.fromEntries(Object.entries(marks.marks)
      .filter(([k]) => k.startsWith('code/')).map(([k, v]) => [k, Math.round(v)])),
  };
  if (!timingsFile || !events.activate) {
    log(`${name}: ${round}: no extension milestones (MEMLENS_TIMINGS_FILE=${timingsFile || 'unset'}); only the UI figures`);
  }
  log(`${name}: ${round}: ${JSON.stringify({ ...result.workbench, ...result.extension, ...result.ui })}`);
  log(`${name}: ${round}: server ${JSON.stringify(result.server)}`);
  return result;
}

// Two windows: "cold" is the first start of the server in this profile (Python compiles the
// bundle's byte-code into the extension's storage), "warm" a second window after it.
await runScenario(name, async ({ page, step, cleanup }) => {
  const cold = await measure(page, step, cleanup, 'cold');
  let warm = null;
  if (process.env.MEMLENS_STARTUP_ROUNDS !== 'cold') {
    const second = await page.context().newPage();
    cleanup(() => second.close());
    warm = await measure(second, step, cleanup, 'warm');
  }
  const result = {
    when: new Date().toISOString(),
    source: 'tests/e2e/startup.mjs',
    python: process.env.MEMLENS_PYTHON || 'default',
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    unit: 'ms',
    goals: { activationToReady: 2000, readyToFirstDiagnostic: 1000 },
    cold,
    warm,
  };
  const out = path.join(ARTIFACTS, `${name === 'startup' ? 'timings' : `timings-${name}`}.json`);
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  log(`${name}: timings in ${out}`);
});
