// The report page's DOM helpers (plain browser JavaScript, part of the page's script:
// client-script.ts): elements built with text through textContent only, and number formats.
export const CLIENT_DOM = String.raw`
  function h(tag, attrs) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) return;
      if (k === 'class') e.className = v; else e.setAttribute(k, v === true ? '' : String(v));
    });
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(e, k) {
    if (k === undefined || k === null || k === false) return;
    if (Array.isArray(k)) { k.forEach(function (x) { add(e, x); }); return; }
    e.append(k instanceof Node ? k : String(k));
  }
  function bytes(n) {
    if (n === null || n === undefined) return '—';
    if (n >= 1048576 && n % 1048576 === 0) return (n / 1048576) + ' MiB';
    if (n >= 1024 && n % 1024 === 0) return (n / 1024) + ' KiB';
    return n.toLocaleString('en') + ' B';
  }
  function ms(us) { return us === null || us === undefined ? '—' : (us / 1000).toFixed(3); }
  function table(head, rows, cls) {
    return h('table', { class: cls }, h('thead', {}, h('tr', {}, head.map(function (c) { return h('th', {}, c); }))), h('tbody', {}, rows));
  }
  function part(title) {
    var d = h('div', { class: 'part' }, h('h4', {}, title));
    for (var i = 1; i < arguments.length; i++) add(d, arguments[i]);
    return d;
  }
  function note(text) { return h('p', { class: 'note' }, text); }
`;
