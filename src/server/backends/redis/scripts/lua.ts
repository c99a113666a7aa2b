/**
 * How scripts share Lua: a module is a named fragment of `local function`s (no statement with an
 * effect), with the modules it calls; a script names the modules it uses and {@link composeLua}
 * writes each of them once, those it needs first, above its body. Redis runs one text per script,
 * so sharing is by inclusion; naming what is included keeps it visible in the script's definition
 * instead of in string interpolations spread across files.
 */

/** A Lua fragment scripts include (see the file's comment). */
export interface LuaModule {
  /** Its name, written above its text in the composed script (`-- module: <name>`). */
  readonly name: string;
  readonly source: string;
  /** Modules its functions call: included before it. */
  readonly needs: readonly LuaModule[];
}

export function luaModule(name: string, source: string, needs: readonly LuaModule[] = []): LuaModule {
  return { name, source, needs };
}

/** A script's text: the modules it uses and the modules they need, each once and after what it needs, then its body. */
export function composeLua(uses: readonly LuaModule[], body: string): string {
  const ordered: LuaModule[] = [];
  const add = (m: LuaModule) => {
    if (ordered.includes(m)) return;
    for (const n of m.needs) add(n);
    ordered.push(m);
  };
  for (const m of uses) add(m);
  return [...ordered.map((m) => `-- module: ${m.name}\n${m.source.trim()}\n`), body.trim(), ''].join('\n');
}
