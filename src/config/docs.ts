/**
 * The settings as people read them, made from their declaration (src/config/settings.ts): the list
 * `tessera serve --help` prints, and the tables of docs/configuration.md, which `make docs`
 * (tools/docs/settings-table.ts) writes between two markers and test/settings.test.ts compares with
 * the declaration, so neither can drift from the code.
 */
import { BOOLEAN_WORDS, shown } from './kinds.js';
import { Computed, GROUPS, type Setting } from './settings.js';

/** The default as shown: a value in code quotes (`8000`, and `(32 MiB)` beside bytes), or the words of a default worked out at start. */
function shownDefault(spec: Setting<unknown>, code: (value: string) => string): string {
  if (spec.default instanceof Computed) return spec.default.text;
  const text = shown(spec.default);
  if (text === '') return 'none';
  const aside = spec.kind.aside?.(spec.default);
  return aside ? `${code(text)} (${aside})` : code(text);
}

/** Paths of the repository named in a description, as links from docs/ (`[src/cluster.ts](../src/cluster.ts)`). */
function linked(text: string): string {
  return text.replace(/(?<![`\w/])((?:src|deploy|tools)\/[\w/.-]*\w)/g, '[`$1`](../$1)');
}

/** `--port <port>` → `--port`. */
function flagName(spec: Setting<unknown>): string | undefined {
  return spec.flag?.split(' ')[0];
}

/** The settings by group, two lines each, for `tessera serve --help`. */
export function settingsHelp(): string {
  return GROUPS.map((group) => {
    const lines = (Object.values(group.settings) as Array<Setting<unknown>>).map((s) => {
      const also = [...(s.formerly ?? []), ...(s.alias ? [s.alias] : [])];
      const flag = flagName(s);
      const head = `  ${s.env}${also.length > 0 ? ` (or ${also.join(', ')})` : ''}${flag ? `, flag ${flag}` : ''}`;
      return `${head}\n      ${s.description} [${s.kind.type}; default: ${shownDefault(s, (v) => v)}]`;
    });
    return ` ${group.title}:\n${lines.join('\n')}`;
  }).join('\n');
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** The tables of docs/configuration.md, one per group of settings. */
function settingsTables(): string {
  const parts = [
    `Booleans are written ${BOOLEAN_WORDS.truthy.map((w) => `\`${w}\``).join(', ')} or ${BOOLEAN_WORDS.falsy.map((w) => `\`${w}\``).join(', ')}, in any case. ` +
      'A blank value is the same as none. Defaults in words are worked out when tessera starts.',
  ];
  for (const group of GROUPS) {
    const rows = (Object.values(group.settings) as Array<Setting<unknown>>).map((s) => {
      const flag = flagName(s);
      const name = `\`${s.env}\`${flag ? ` (flag \`${flag}\`)` : ''}`;
      const also = [...(s.formerly ?? []).map((n) => `\`${n}\` (former name)`), ...(s.alias ? [`\`${s.alias}\` (${aliasOwner(s.alias)})`] : [])].join(', ');
      const about = linked(s.details ? `${s.description}. ${s.details}` : s.description);
      return `| ${[name, also, shownDefault(s, (v) => `\`${v}\``), s.kind.type, about].map(cell).join(' | ')} |`;
    });
    parts.push(`### ${group.title}\n\n| setting | also read as | default | value | what it does |\n|---|---|---|---|---|\n${rows.join('\n')}`);
  }
  return parts.join('\n\n');
}

const BEGIN = '<!-- settings: begin. Generated from src/config/settings.ts by `make docs`; edit there, not here. -->';
const END = '<!-- settings: end -->';

/** `page` (docs/configuration.md) with the part between the markers made again from the declaration. */
export function withSettingsTables(page: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`the page has no ${BEGIN} … ${END} markers to write the settings between`);
  return `${page.slice(0, begin + BEGIN.length)}\n\n${settingsTables()}\n\n${page.slice(end)}`;
}

/** Whose name an alias is: TiTiler's, titiler-pgstac's, or GDAL's (the object stores', which TiTiler users set for GDAL). */
function aliasOwner(alias: string): string {
  if (alias.startsWith('TITILER_API_')) return 'TiTiler';
  if (/^(AWS_|CPL_GS_|GS_|AZURE_)/.test(alias)) return 'GDAL';
  return 'titiler-pgstac';
}
