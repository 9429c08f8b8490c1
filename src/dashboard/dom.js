// The few DOM helpers every view uses: a node by id, and an element with attributes and children.

export const $ = (id) => document.getElementById(id);

/** `el('td', { class: 'x' }, 'text', child)`: attributes set as given, children appended (text stays text). */
export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};
