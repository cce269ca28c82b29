// Small DOM helpers for the Chat panel: elements are built with their attributes and text set
// through the DOM (never through HTML strings), and model markdown is sanitised before it is
// rendered.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

/** The model's markdown as HTML: markdown-it with raw HTML off, then DOMPurify. */
export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(md.render(text), {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
    FORBID_ATTR: ["style"],
  });
}

type Attrs = Record<string, string | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Node | string | undefined>
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) {
      continue;
    }
    if (name === "class") {
      element.className = String(value);
    } else {
      element.setAttribute(name, value === true ? "" : value);
    }
  }
  for (const child of children) {
    if (child !== undefined) {
      element.append(child);
    }
  }
  return element;
}

export function button(label: string, attrs: Attrs, onClick: () => void): HTMLButtonElement {
  const element = h("button", { type: "button", ...attrs }, label);
  element.addEventListener("click", onClick);
  return element;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

export function basename(file: string): string {
  const parts = file.split(/[\\/]/).filter(Boolean);
  return parts.slice(-2).join("/") || file;
}
