/**
 * Syntax colouring for the transcript's code blocks: highlight.js core with
 * the languages agents write most (about 60 KB of the bundle; a language is
 * 2–13 KB, so the list stays short), bundled (no remote script, no inline
 * style: it emits `<span class="hljs-…">`, coloured by transcript.css under
 * the strict CSP). A fence with an unknown or no language stays plain.
 */

import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = {
  bash,
  c,
  cpp,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  lua,
  makefile,
  markdown,
  python,
  ruby,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};

for (const [name, language] of Object.entries(LANGUAGES)) {
  hljs.registerLanguage(name, language);
}
// Names fences use that highlight.js does not know by themselves.
hljs.registerAliases(['toml'], { languageName: 'ini' });
hljs.registerAliases(['sh', 'zsh', 'console'], { languageName: 'bash' });

/** The code as highlighted HTML (escaped), or undefined for a language we do not colour. */
export function highlight(code: string, language: string): string | undefined {
  const name = language.trim().toLowerCase();
  if (name === '' || hljs.getLanguage(name) === undefined) {
    return undefined;
  }
  return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
}
