// The "Tokens and domains" view: tokens made here (shown once, to copy or revoke), the game's
// tokens as the server keeps them (never a secret) each revocable, a token revoked by pasting it,
// and the namespace's custom domains (add, remove, their verification state).
import { $, el, empty } from './dom.js';

/**
 * The view, wired to the page: `call(method, path, body)` is the API, `gamePath(rest)` and
 * `nsPath(rest)` the game's and the namespace's paths, `game()` the game as last loaded,
 * `namespaceLoaded(namespace)` hears of the namespace each time the domains are read, `button` and
 * `age` the app's helpers. Returns what the app calls when the view opens and when the namespace
 * changes.
 */
export function accessView({ call, gamePath, nsPath, game, namespaceLoaded, button, age, showError }) {
  let made = [];

  function drawTokens() {
    $('tokens').replaceChildren(...made.map((t) => {
      const input = el('input', { readonly: '', value: t.token, 'aria-label': `${t.kind} token` });
      const copy = button('Copy', () => navigator.clipboard.writeText(t.token).then(() => (t.note = 'copied'), () => (t.note = 'select it and copy by hand')).then(drawTokens), { 'aria-label': `Copy the ${t.kind} token` });
      const revoke = button('Revoke', () => revokeToken(t.token).then((done) => {
        t.revoked = done;
        drawTokens();
      }), { class: 'danger', 'aria-label': `Revoke the ${t.kind} token` });
      return el('li', { class: t.revoked ? 'revoked' : '' }, el('span', {}, `${t.kind} token${t.revoked ? ' (revoked)' : t.note ? ` (${t.note})` : ''}`), input, ...(t.revoked ? [] : [copy, revoke]));
    }));
  }

  async function createToken(kind) {
    const { token } = await call('POST', kind === 'public' ? nsPath('/tokens/public') : gamePath('/tokens/cloud'), {});
    made.unshift({ kind, token });
    drawTokens();
    await loadTokens();
  }

  /** Revokes a token (`{ token }` or `{ token_id }`) once confirmed; whether it did. */
  async function revokeToken(token, what = 'this token') {
    if (!confirm(`Revoke ${what}? Everything using it is refused from the next request on.`)) return false;
    await call('POST', gamePath('/tokens/revoke'), typeof token === 'string' ? { token } : token);
    $('token-status').textContent = 'Token revoked: it is refused from now on.';
    await loadTokens();
    return true;
  }

  const nsName = (id) => game()?.namespaces?.find((n) => n.namespace_id === id)?.display_name ?? id?.slice(0, 8) ?? '';

  /** The game's tokens as the server keeps them (ids, kinds, times; never a secret), newest first, each revocable. */
  async function loadTokens() {
    const { tokens, more } = await call('GET', gamePath('/tokens'));
    const stateOf = (t) => (t.is_revoked ? `revoked ${age(t.revoke_ts)} ago` : t.is_expired ? 'expired' : 'active');
    $('token-list').replaceChildren(...tokens.map((t) => {
      const name = `${t.kind} token ${t.token_id.slice(0, 8)}`;
      const action = t.is_revoked || t.is_expired ? '' : button('Revoke', () => revokeToken({ token_id: t.token_id }, `the ${name}`), { class: 'danger', 'aria-label': `Revoke ${name}` });
      return el('tr', { 'data-token': t.token_id, class: t.is_revoked ? 'revoked' : '' }, el('td', {}, t.kind), el('td', {}, el('code', {}, t.token_id.slice(0, 8))),
        el('td', {}, t.namespace_id ? nsName(t.namespace_id) : 'whole game'), el('td', {}, `${age(t.create_ts)} ago`),
        el('td', {}, t.expire_ts ? new Date(t.expire_ts).toLocaleDateString() : '-'), el('td', {}, stateOf(t)), el('td', {}, action));
    }));
    empty('token-list-empty', tokens.length > 0 ? undefined : 'No token of this game yet: create one above (a public token for game clients, a cloud token for the CLI).');
    $('token-list-more').hidden = !more;
  }

  async function loadDomains() {
    const { namespace } = await call('GET', nsPath());
    namespaceLoaded(namespace);
    const domains = namespace.config.cdn.domains;
    empty('domains-empty', domains.length > 0 ? undefined : 'No custom domain yet: add one below, then point its DNS (CNAME) at the name shown beside it.');
    $('domains').replaceChildren(...domains.map((d) => el('tr', { 'data-domain': d.domain }, el('td', {}, d.domain),
      el('td', {}, [d.verification_status, ...d.verification_errors].join(': ')), el('td', {}, el('code', {}, d.verification_method?.http?.cname_record ?? '-')),
      el('td', {}, button(`Remove ${d.domain}`, async () => {
        if (!confirm(`Remove ${d.domain}? The site stops answering on it.`)) return;
        await call('DELETE', nsPath(`/domains/${encodeURIComponent(d.domain)}`));
        await loadDomains();
      }, { class: 'danger' })))));
  }

  $('token-public').addEventListener('click', () => void createToken('public').catch(showError));
  $('token-cloud').addEventListener('click', () => void createToken('cloud').catch(showError));
  $('revoke-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('revoke-token').value.trim();
    revokeToken(token).then((done) => {
      if (!done) return;
      $('revoke-token').value = '';
      for (const t of made) if (t.token === token) t.revoked = true;
      drawTokens();
    }, showError);
  });
  $('domain-form').addEventListener('submit', (event) => {
    event.preventDefault();
    call('POST', nsPath('/domains'), { domain: $('domain-name').value.trim() }).then(() => {
      $('domain-name').value = '';
      return loadDomains();
    }).catch(showError);
  });

  return {
    /** As the view opens: the namespace's domains and the game's tokens, read afresh. */
    load: () => Promise.all([loadDomains(), loadTokens()]),
    /** Another namespace: the tokens made here are no longer shown. */
    reset() {
      made = [];
      drawTokens();
    },
  };
}
