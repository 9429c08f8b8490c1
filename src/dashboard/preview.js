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
export function problemLines(metadata) {
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
export function drawPreview(p) {
  $('preview-summary').textContent = `${p.requests.toLocaleString('en-US')} recorded requests, ${utc(p.window.start_ts)} to ${utc(p.window.end_ts)} UTC, replayed under each config (seed ${p.seed}).`;
  $('preview-empty').textContent = 'Nothing is recorded in this window yet: both columns show idle lobbies only. Players\' finds, joins and creates are recorded as they come; run the preview again once players have played.';
  $('preview-empty').hidden = p.requests > 0;
  drawTable(p);
  $('preview-notes').replaceChildren(...p.notes.map((n) => el('li', {}, n)));
  $('preview-bound').textContent = `Error bound: ${p.error_bound.text}`;
  drawCharts(p);
  $('preview-result').hidden = false;
}
