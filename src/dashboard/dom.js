// The few DOM helpers every view uses: a node by id, an element with attributes and children, and
// an empty state's note.

export const $ = (id) => document.getElementById(id);

/** `el('td', { class: 'x' }, 'text', child)`: attributes set as given, children appended (text stays text). */
export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};

/** An empty state's note: `text` shown in the node, or the node hidden when there is none. */
export const empty = (id, text) => {
  $(id).textContent = text ?? '';
  $(id).hidden = text === undefined;
};
