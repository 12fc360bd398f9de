// Text made safe for the page: HTML text and attribute values escaped, and JSON embedded in a
// <script type="application/json"> element with every `<` written as \u003c (so no `</script>` or
// `<!--` inside the data can end the element; JSON.parse reads it back unchanged).

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `s` as HTML text or a quoted attribute value. */
export function esc(s: string | number): string {
  return String(s).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** `value` as JSON that may sit inside a <script> element. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
