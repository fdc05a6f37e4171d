/**
 * Settings as tessera runs with them, read as src/config/settings.ts declares them: for each, a
 * `tessera serve` flag wins, then the environment (tessera's name, its former names, TiTiler's),
 * then a settings file (`tessera serve --config FILE` or TESSERA_CONFIG, for what the environment
 * leaves unset), then the default. The `Settings` type is derived from the declaration, so a
 * setting's name, type and default are stated once.
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { Computed, OTHER_NAMES, SETTINGS, type DefaultContext, type Setting } from './config/settings.js';

type Declared = typeof SETTINGS;
type Key = keyof Declared;
/** Each setting's value type, from its declared kind. */
type Values = { -readonly [K in Key]: Declared[K] extends Setting<infer T> ? T : never };
/** The declaration seen key by key, so that `SPECS[key]` is known to be a `Setting<Values[key]>`. */
const SPECS: { readonly [K in Key]: Setting<Values[K]> } = SETTINGS;

/** The three TESSERA_DISABLE_* switches, and the route family each leaves out. */
const FAMILY_SWITCHES = { disableCog: 'cog', disableStac: 'stac', disableMosaic: 'mosaicjson' } as const;
type Switch = keyof typeof FAMILY_SWITCHES;

/**
 * Every setting's value by its key (`settings.port`), typed from its declaration; the disable
 * switches come together as the list of route families left out.
 */
export type Settings = Omit<Values, Switch> & {
  /** Route families left out (TESSERA_DISABLE_COG/STAC/MOSAIC, TiTiler's TITILER_API_DISABLE_*). */
  disabledFamilies: Array<(typeof FAMILY_SWITCHES)[Switch]>;
};

/** A setting's key, for flag values given as text (`{ port: '8080' }`). */
export type SettingKey = Key;

/** The settings a `tessera serve` flag overrides: the flag as commander takes it, and what it sets. */
export function settingFlags(): Array<{ key: Key; flag: string; env: string; description: string }> {
  return (Object.keys(SPECS) as Key[]).flatMap((key) => {
    const { flag, env, description } = SPECS[key];
    return flag ? [{ key, flag, env, description }] : [];
  });
}

/** The names a setting is read under, in order: tessera's, its former ones, TiTiler's. */
function namesOf(spec: Setting<unknown>): string[] {
  return [spec.env, ...(spec.formerly ?? []), ...(spec.alias ? [spec.alias] : [])];
}

function knownNames(): Set<string> {
  return new Set(Object.values(SPECS).flatMap((spec: Setting<unknown>) => namesOf(spec)));
}

/** The value of `text` for setting `key`, or the message saying what was expected. */
export function parseSetting<K extends Key>(key: K, text: string): { ok: true; value: Values[K] } | { ok: false; message: string } {
  const parsed = SPECS[key].kind.schema.safeParse(text.trim());
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: parsed.error.issues[0]?.message ?? 'invalid value' };
}

/**
 * Reads a settings file into `env` for every setting `env` leaves unset: the environment wins, so
 * one value can be changed for one replica or container without editing the file. The file has
 * the environment's names in the `.env` syntax that docker's --env-file, compose's env_file and
 * systemd's EnvironmentFile read (`NAME=value`, `#` comments, quotes; Node's own parser). A name
 * that is not a setting is an error here, unlike in the environment (which holds everything else
 * too): a misspelt line in a file written for tessera must not be ignored. Returns the names taken.
 */
export function applySettingsFile(file: string, env: NodeJS.ProcessEnv = process.env): string[] {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the settings file '${file}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const values = parseEnv(content);
  const known = knownNames();
  const unknown = Object.keys(values).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `${file}: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a setting' : 'are not settings'} tessera knows (see tessera serve --help)`,
    );
  }
  const taken: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    taken.push(name);
  }
  return taken;
}

/** Names in the environment that look like tessera's (or TiTiler's) but are not settings it knows. */
export function unknownSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set<string>([...OTHER_NAMES, ...knownNames()]);
  return Object.keys(env)
    .filter((name) => (name.startsWith('TESSERA_') || name.startsWith('TITILER_API_')) && !known.has(name))
    .sort();
}

/**
 * The settings: `overrides` (values, from code) win over `flags` (text from the command line), which
 * win over `env`, which wins over the defaults. A blank value counts as unset; one that is not valid
 * throws an error naming where it came from (`TESSERA_PORT: expected at most 65535, got '70000'`).
 */
export function loadSettings(overrides: Partial<Settings> = {}, env: NodeJS.ProcessEnv = process.env, flags: Partial<Record<Key, string>> = {}): Settings {
  /** The value given for `key` as text (a flag, then the environment's names), or undefined. */
  const given = <K extends Key>(key: K): Values[K] | undefined => {
    const sources: Array<[string, string | undefined]> = [
      [SPECS[key].flag?.split(' ')[0] ?? key, flags[key]],
      ...namesOf(SPECS[key]).map((name): [string, string | undefined] => [name, env[name]]),
    ];
    for (const [name, raw] of sources) {
      if (raw === undefined || raw.trim() === '') continue;
      const parsed = parseSetting(key, raw);
      if (!parsed.ok) throw new Error(`${name}: ${parsed.message}, got '${raw}'`);
      return parsed.value;
    }
    return undefined;
  };
  const resolve = <K extends Key>(key: K): Values[K] => {
    const value = given(key);
    if (value !== undefined) return value;
    const fallback = SPECS[key].default;
    return fallback instanceof Computed ? fallback.compute(context) : fallback;
  };
  // Defaults worked out at start see the machine and the number of processes (given or default).
  const context: DefaultContext = {
    cores: os.availableParallelism(),
    get workers() {
      return overrides.workers ?? resolve('workers');
    },
  };

  const values: Partial<Record<Key, unknown>> = {};
  const disabledFamilies: Settings['disabledFamilies'] = [];
  for (const key of Object.keys(SPECS) as Key[]) {
    if (key in FAMILY_SWITCHES) {
      if (resolve(key)) disabledFamilies.push(FAMILY_SWITCHES[key as Switch]);
    } else if (!(key in overrides)) {
      values[key] = resolve(key);
    }
  }
  // Each value above was parsed by its own setting's schema (or is its declared default), which is
  // what `Settings` says of it; TypeScript cannot follow a loop over the keys, hence the one assertion.
  return { ...(values as Omit<Settings, 'disabledFamilies'>), disabledFamilies, ...overrides };
}
