// The "Versions" view: the game's versions newest first, the namespace's current one marked, and
// any other published (or rolled back to) with one confirmed click.
import { $, el, empty } from './dom.js';

/**
 * The view, wired to the page: `call(method, path, body)` is the API, `nsPath(rest)` the
 * namespace's path, `reloadGame()` reads the game afresh and `game()` gives it as last read,
 * `nsId()` the namespace shown, `published()` what the app redraws once another version is live,
 * `button` and `age` the app's helpers. Returns what the app calls when the view opens.
 */
export function versionsView({ call, nsPath, reloadGame, game, nsId, published, button, age }) {
  async function load() {
    await reloadGame();
    const current = game().namespaces.find((n) => n.namespace_id === nsId())?.version_id;
    const versions = [...(game().versions ?? [])].sort((a, b) => Date.parse(b.create_ts) - Date.parse(a.create_ts));
    const currentTs = Date.parse(versions.find((v) => v.version_id === current)?.create_ts ?? '0');
    empty('versions-empty', versions.length > 0 ? undefined : 'No version yet: run tavern deploy in your game\'s folder.');
    $('versions').replaceChildren(...versions.map((v) => {
      const isCurrent = v.version_id === current;
      const verb = Date.parse(v.create_ts) < currentTs ? 'Roll back to' : 'Publish';
      const action = isCurrent ? el('strong', {}, 'current') : button(`${verb} ${v.display_name}`, () => publish(v, verb));
      return el('tr', { 'data-version': v.version_id, class: isCurrent ? 'current' : '' }, el('td', {}, v.display_name), el('td', {}, `${age(v.create_ts)} ago`), el('td', {}, el('code', {}, v.version_id.slice(0, 8))), el('td', {}, action));
    }));
  }

  async function publish(version, verb) {
    const ns = game().namespaces.find((n) => n.namespace_id === nsId());
    if (!confirm(`${verb} ${version.display_name} in ${ns?.display_name ?? 'this namespace'}? New lobbies run it; running lobbies become outdated.`)) return;
    await call('PUT', nsPath('/version'), { version_id: version.version_id });
    await load();
    await published();
  }

  return { load };
}
