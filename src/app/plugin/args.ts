/** Every `--plugin PATH` / `--plugin=PATH` on a command line, in order (read before commander runs). */
export function pluginArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    if (a === '--plugin' && argv[i + 1] !== undefined) out.push(argv[i + 1] as string);
    else if (a.startsWith('--plugin=')) out.push(a.slice('--plugin='.length));
  });
  return out;
}

/** The `--plugin` option's help, shared by every command that takes it. */
export const PLUGIN_HELP =
  'load a plugin module (.ts, .js, .mjs) before anything else; repeatable. Its names join the choices';

/** commander's collector for a repeatable option. */
export const collectPlugin = (v: string, prev: string[]): string[] => [...prev, v];
