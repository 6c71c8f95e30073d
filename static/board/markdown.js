// The one Markdown sanitizer of the pages: task descriptions and comments alike become DOM
// through marked and then DOMPurify (a sanitized fragment), never as HTML strings.

import DOMPurify from "../vendor/dompurify/purify.es.mjs";
import { Marked } from "../vendor/marked/marked.esm.js";

// Raw HTML in Markdown shows as the text it is: never parsed, so never run (nor even handed
// to the browser's parser, whose CSP check would report its inline handlers).
const markdown = new Marked({
  renderer: {
    html({ text }) {
      return this.text({ type: "text", raw: text, text });
    },
  },
});

/** Markdown as a sanitized DocumentFragment (DOMPurify drops javascript: links and the like). */
export function markdownFragment(text) {
  return DOMPurify.sanitize(markdown.parse(text ?? "", { async: false }), { RETURN_DOM_FRAGMENT: true });
}
