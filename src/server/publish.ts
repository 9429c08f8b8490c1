/**
 * Where `app.ts` and `routes/mm-info.ts` find the start-up sync and the namespace check: the use
 * cases live in `services/publish.ts` (this re-export goes once those two import it directly).
 */
export { ensureNamespace, syncNamespaces } from '../services/publish.js';
