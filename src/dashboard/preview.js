// The deploy preview in the dashboard: the namespace's recorded demand replayed under the live
// version and under a config pasted or uploaded here (POST .../preview, the API `tavern deploy
// --preview` uses), shown as the side-by-side table, its notes and error bound, and charts with
// two series (live, new). Nothing is created.
import { timeChart } from './charts.js';
import { $, el } from './dom.js';

const LIVE = '#0b5cad', NEW = '#b35c00';

const number = (n, kind) => {
  if (kind === 'ms') return `${Math.round(n).toLocaleString('en-US')} ms`;
  if (kind === 'share') return `${n.toFixed(1)} %`;
  if (kind === 'hours' || kind === 'money') return n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  return Math.round(n).toLocaleString('en-US');
};

const change = (f) => {
  if (f.kind === 'share') return `${f.delta >= 0 ? '+' : ''}${f.delta.toFixed(1)} pp`;
  if (f.change_pct === null) return 'new';
  return `${f.change_pct >= 0 ? '+' : ''}${f.change_pct.toFixed(1)} %`;
};

const utc = (ts) => ts.slice(0, 16).replace('T', ' ');

/**
 * The config in the text box as JSON, or what is wrong with it in words.
 *
 * @example
 * readConfig('{"matchmaker": {}}') // { config: { matchmaker: {} } }
 */
export function readConfig(text) {
  if (text.trim() === '') return { problem: 'Paste a version config (JSON) or choose a file first.' };
  try {
    const config = JSON.parse(text);
    if (typeof config !== 'object' || config === null || Array.isArray(config)) return { problem: 'The config must be a JSON object, as the version config of rivet.json or tavern version preview --json takes.' };
    return { config };
  } catch (e) {
    return { problem: `The config is not JSON: ${e.message}` };
  }
}

/** A validation error's problems, one line each: the field's path, and what is wrong when the server says. */
function problemLines(metadata) {
  const errors = Array.isArray(metadata?.errors) ? metadata.errors : [];
  return errors.map((p) => {
    const path = (p.path ?? []).join('.');
    return p.message ? `${path}: ${p.message}` : path;
  });
}

function drawTable(p) {
  $('preview-figures').replaceChildren(...p.figures.map((f) => {
    const sub = f.name.includes('.');
    return el('tr', { 'data-figure': f.name, class: sub ? 'sub' : '' }, el('th', { scope: 'row' }, f.label), el('td', {}, number(f.live, f.kind)),
      el('td', {}, number(f.new, f.kind)), el('td', {}, change(f)));
  }));
}

function drawCharts(p) {
  const s = p.series;
  const from = Date.parse(s.start_ts);
  const n = s.live.players.length;
  const to = from + n * s.step_ms;
  const minutes = Math.round(s.step_ms / 60_000);
  const chart = (label, unit, pick) => el('figure', {}, el('figcaption', {}, label),
    timeChart({ label, unit, from, to, stepMs: s.step_ms, series: [{ name: 'live', color: LIVE, values: pick(s.live) }, { name: 'new', color: NEW, values: pick(s.new) }] }));
  const secs = (v) => (v === null ? null : v / 1000);
  $('preview-charts').replaceChildren(
    chart('Players', 'players (peak)', (r) => r.players),
    chart('Lobbies running', 'lobbies (peak)', (r) => r.lobbies),
    chart('Ports in use', 'ports (peak)', (r) => r.ports),
    chart('Time to a ready seat', 'seconds (p95)', (r) => r.wait_p95_ms.map(secs)),
  );
  $('preview-step').textContent = `Each point is the peak of ${minutes === 1 ? 'a minute' : `${minutes} minutes`} (the time to a ready seat: the worst minute's p95); blue is the live version, orange the new config.`;
}

/** Draws an API answer's `preview`: the summary, the table, the notes, the bound and the charts. */
function drawPreview(p) {
  $('preview-summary').textContent = `${p.requests.toLocaleString('en-US')} recorded requests, ${utc(p.window.start_ts)} to ${utc(p.window.end_ts)} UTC, replayed under each config (seed ${p.seed}).`;
  $('preview-empty').textContent = 'Nothing is recorded in this window yet: both columns show idle lobbies only. Players\' finds, joins and creates are recorded as they come; run the preview again once players have played.';
  $('preview-empty').hidden = p.requests > 0;
  drawTable(p);
  $('preview-notes').replaceChildren(...p.notes.map((n) => el('li', {}, n)));
  $('preview-bound').textContent = `Error bound: ${p.error_bound.text}`;
  drawCharts(p);
  $('preview-result').hidden = false;
}

const problem = (text, lines = []) => {
  $('preview-status').textContent = text;
  $('preview-problems').replaceChildren(...lines.map((l) => el('li', {}, el('code', {}, l))));
};

const problemsText = (n) => `The new config has ${n === 1 ? 'a problem' : `${n} problems`}; fix ${n === 1 ? 'this field' : 'these fields'} and run again:`;

/**
 * The view, wired to the page: `call(method, path, body)` is the API (its errors carry `code` and
 * `metadata`), `nsPath(rest)` the namespace's path, `liveConfig()` the live version's config as
 * text (undefined when none is live). Returns what the app calls when the view opens and when the
 * namespace changes.
 */
export function previewView({ call, nsPath, liveConfig, showError }) {
  const box = $('preview-config');
  async function run() {
    problem('');
    const { config, problem: wrong } = readConfig(box.value);
    if (wrong !== undefined) return problem(wrong);
    const q = new URLSearchParams({ since: $('preview-since').value, seed: $('preview-seed').value.trim() || '1' });
    $('preview-run').disabled = true;
    $('preview-running').textContent = 'Replaying the recorded demand under both configs…';
    try {
      drawPreview((await call('POST', nsPath(`/preview?${q}`), config)).preview);
    } catch (e) {
      $('preview-result').hidden = true;
      const lines = problemLines(e.metadata);
      if (e.code === 'VALIDATION_ERROR' && lines.length > 0) problem(problemsText(lines.length), lines);
      else problem(e.message);
    } finally {
      $('preview-running').textContent = '';
      $('preview-run').disabled = false;
    }
  }
  $('preview-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void run();
  });
  $('preview-file').addEventListener('change', () => {
    const file = $('preview-file').files[0];
    if (file === undefined) return;
    if (/\.toml$/i.test(file.name)) {
      problem(`${file.name} is a rivet.toml: the dashboard takes the version config as JSON. Preview a rivet.toml with tavern version preview ${file.name}, or paste its config as JSON.`);
      return;
    }
    file.text().then((text) => {
      box.value = text;
      problem('');
    }, showError);
  });
  return {
    /** As the view opens: the live config to start from, or what to do when none is live. */
    prepare() {
      const live = liveConfig();
      $('preview-none').textContent = live === undefined ? 'No version is live in this namespace yet: deploy one first (tavern deploy). A preview compares a new config with the live one.' : '';
      $('preview-none').hidden = live !== undefined;
      $('preview-run').disabled = live === undefined;
      if (live !== undefined && box.value.trim() === '') box.value = live;
    },
    /** Another namespace: its own live config next time, no result. */
    reset() {
      box.value = '';
      $('preview-result').hidden = true;
      problem('');
    },
  };
}
