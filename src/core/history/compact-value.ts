/**
 * A structured value kept in its compact tree form (./event-columns.ts): the int32 nodes a reading
 * thread scanned it into, read in place instead of rebuilt as JavaScript arrays.
 *
 * A list of int32 integers, nulls, strings or such lists (a transaction's micro-ops,
 * `[["append", 3, 7], ["r", 5, [1, 2]]]`) is a run of nodes in pre-order, two int32 each: a kind
 * (`TREE_…`) and an int, a string reference or a list's length (its elements follow). A consumer that
 * copies such values into arrays of its own (Elle's builder) reads them node by node and never makes the
 * arrays, which on a history of millions of transactions cost more than reading the file.
 *
 * Only a reader asked for them makes these (`compactValues` in ./read.ts), and only a checker whose
 * stream form says it takes them (`OpSink.compactValues`) is given ops carrying them. `value()` (and
 * `JSON.stringify`, through `toJSON`) gives the plain value the reader would otherwise have made.
 */

/** Node kinds. */
export const TREE_INT = 0;
export const TREE_NULL = 1;
export const TREE_STRING = 2;
export const TREE_LIST = 3;

export class CompactValue {
  /**
   * `tree` holds the nodes (two int32 each), `root` is the value's first node; a string node's
   * reference is `>= 0` an entry of `strings` (a table that only grows) or `<= -2` `texts[-ref - 2]`.
   */
  constructor(
    readonly tree: Int32Array,
    readonly root: number,
    private readonly strings: readonly string[],
    private readonly texts: readonly string[],
  ) {}

  /** The kind (`TREE_…`) of node `node`. */
  kind(node: number): number {
    return this.tree[node << 1] as number;
  }

  /** A TREE_INT node's integer, or a TREE_LIST node's length (its elements start at `node + 1`). */
  int(node: number): number {
    return this.tree[(node << 1) + 1] as number;
  }

  /** A TREE_STRING node's string. */
  string(node: number): string {
    return this.text(this.tree[(node << 1) + 1] as number);
  }

  /** The string a reference names. */
  text(ref: number): string {
    return (ref >= 0 ? this.strings[ref] : this.texts[-ref - 2]) as string;
  }

  /** The node after the value starting at `node` (past a list's elements). */
  after(node: number): number {
    const tree = this.tree;
    let pending = 1;
    let at = node;
    while (pending > 0) {
      pending--;
      if (tree[at << 1] === TREE_LIST) pending += tree[(at << 1) + 1] as number;
      at++;
    }
    return at;
  }

  /** The plain value starting at `node` (the whole value by default), as the reader would have made it. */
  value(node = this.root): unknown {
    return treeValueAt(this.tree, node, this.strings, this.texts);
  }

  toJSON(): unknown {
    return this.value();
  }
}

/** The node after the value {@link treeValueAt} last rebuilt. */
let cursor = 0;

/**
 * The plain value of the tree starting at `node`: arrays, integers, nulls and strings (string refs as
 * in {@link CompactValue}). Each list is sized once: a read of dozens of elements pushed one by one was
 * reallocated several times.
 */
export function treeValueAt(
  tree: Int32Array,
  node: number,
  strings: readonly string[],
  texts: readonly string[],
): unknown {
  cursor = node;
  return rebuild(tree, strings, texts);
}

function rebuild(tree: Int32Array, strings: readonly string[], texts: readonly string[]): unknown {
  let at = cursor << 1;
  const kind = tree[at] as number;
  const x = tree[at + 1] as number;
  if (kind !== TREE_LIST) {
    cursor++;
    if (kind === TREE_INT) return x;
    if (kind === TREE_NULL) return null;
    return x >= 0 ? strings[x] : texts[-x - 2];
  }
  const list: unknown[] = new Array(x);
  at += 2;
  for (let i = 0; i < x; i++) {
    // Integer elements (a read's list) inline; anything else recursively.
    if (tree[at] === TREE_INT) {
      list[i] = tree[at + 1];
      at += 2;
    } else {
      cursor = at >> 1;
      list[i] = rebuild(tree, strings, texts);
      at = cursor << 1;
    }
  }
  cursor = at >> 1;
  return list;
}
