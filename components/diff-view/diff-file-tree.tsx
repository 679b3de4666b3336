import { memo, startTransition, useCallback, useEffect, useMemo, useRef, useState, type MouseEvent } from "react";
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { StatusBadge } from "./status-badge";
import { formatCount } from "@/lib/format/format";

/**
 * A long tree is listed a page at a time: the first TREE_PAGE entries with the page, the next ones
 * when the end of the list comes into view in the tree's box (scrolling it), or from the "List
 * more" button after the last entry (keyboard, screen readers, no scrolling). Every file stays one
 * scroll or one button away, and the tree is never more DOM than the teacher has looked at.
 *
 * Measured at 1,000 files: the whole tree was ~12,000 of the page's ~12,500 elements — most of its
 * HTML, of its first layout and of its hydration; listing it all after hydration cost 50–150 ms of
 * layout per 160 entries; with `content-visibility: auto` on every entry, the browser checked each
 * one against the viewport in every frame (6–12 ms of each scroll step of the diff). Growth is a
 * transition; entries have no `content-visibility` (a few hundred are laid out once, in their own
 * `contain: content` box, and cost nothing when the diff scrolls).
 */
export const TREE_PAGE = 100;

type TTreeDir = { name: string; dirs: TTreeDir[]; files: { index: number; name: string }[] };

/**
 * Groups paths by directory, keeping git's order, and folds chains of single-directory levels
 * ("src/module-1") into one entry so deep trees stay short.
 */
export function buildFileTree(paths: readonly string[]): TTreeDir {
  const root: TTreeDir = { name: "", dirs: [], files: [] };
  paths.forEach((path, index) => {
    const parts = path.split("/");
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.find((d) => d.name === part);
      if (!next) {
        next = { name: part, dirs: [], files: [] };
        dir.dirs.push(next);
      }
      dir = next;
    }
    dir.files.push({ index, name: parts[parts.length - 1]! });
  });
  const fold = (dir: TTreeDir): TTreeDir => {
    let current = { ...dir, dirs: dir.dirs.map(fold) };
    while (current.name !== "" && current.files.length === 0 && current.dirs.length === 1) {
      const only = current.dirs[0]!;
      current = { name: `${current.name}/${only.name}`, dirs: only.dirs, files: only.files };
    }
    return current;
  };
  return fold(root);
}

/** Only what the tree shows: the outline's files (no lines), so the tree never changes while lines arrive. */
type TTreeFile = Pick<TDiffFile, "path" | "status" | "isBinary" | "additions" | "deletions">;
type TProps = { files: readonly TTreeFile[]; anchorIdOf: (index: number) => string; onJump: (index: number) => void };

/**
 * Where each file comes in the tree as it is read (directories first, then files, depth first),
 * and for each directory the first such place of a file under it: the tree shows the first
 * `shown` files in that order, so it only ever grows at its end.
 */
export function listOrderOf(
  tree: TTreeDir,
  fileCount: number,
): { rankOf: Int32Array; firstRankOf: Map<TTreeDir, number> } {
  const rankOf = new Int32Array(fileCount);
  const firstRankOf = new Map<TTreeDir, number>();
  let rank = 0;
  const walk = (dir: TTreeDir) => {
    firstRankOf.set(dir, rank);
    for (const sub of dir.dirs) walk(sub);
    for (const file of dir.files) rankOf[file.index] = rank++;
  };
  walk(tree);
  return { rankOf, firstRankOf };
}

/** How many entries the tree lists, and a way to list the next page (a transition). */
function useListedCount(total: number): { listed: number; listMore: () => void } {
  const [count, setCount] = useState(TREE_PAGE);
  const listMore = useCallback(() => startTransition(() => setCount((n) => n + TREE_PAGE)), []);
  return { listed: Math.min(total, count), listMore };
}

/** Lists the next page when the end of the list scrolls into view (in the tree's own box too: the observer sees its clipping). */
function ListMore({
  remaining,
  onListMore,
  onPress,
}: {
  remaining: number;
  onListMore: () => void;
  onPress: () => void;
}) {
  const button = useRef<HTMLButtonElement | null>(null);
  useEffect(() => {
    const element = button.current;
    if (!element || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) onListMore();
    });
    observer.observe(element);
    return () => observer.disconnect();
    // A new observer per page: the button stays in view while short pages are listed, and each page is asked for once.
  }, [onListMore, remaining]);
  return (
    <button
      ref={button}
      type="button"
      onClick={onPress}
      className="mt-1 w-full rounded border border-slate-300 bg-white px-2 py-0.5 text-left text-xs text-slate-700 hover:bg-slate-100 focus:outline-2 focus:outline-blue-600"
      data-testid="diff-tree-more"
    >
      List {formatCount(Math.min(remaining, TREE_PAGE))} more of {formatCount(remaining)} files not listed yet
    </button>
  );
}

/** The changed files as a tree; each file is a link to its section (works without JavaScript too). */
export const DiffFileTree = memo(function DiffFileTree({ files, anchorIdOf, onJump }: TProps) {
  const { tree, rankOf, firstRankOf } = useMemo(() => {
    const built = buildFileTree(files.map((f) => f.path));
    return { tree: built, ...listOrderOf(built, files.length) };
  }, [files]);
  const { listed: shown, listMore } = useListedCount(files.length);
  // Pressed (keyboard or pointer): focus moves to the first file it listed, so it is never lost
  // when the button goes away with the last page, and Tab goes on through the new entries.
  const nav = useRef<HTMLElement | null>(null);
  const focusRank = useRef<number | null>(null);
  const onPressMore = useCallback(() => {
    focusRank.current = shown;
    listMore();
  }, [shown, listMore]);
  useEffect(() => {
    const rank = focusRank.current;
    if (rank === null || rank >= shown) return;
    focusRank.current = null;
    nav.current?.querySelector<HTMLElement>(`[data-rank="${rank}"]`)?.focus();
  }, [shown]);
  const onClick = (event: MouseEvent<HTMLAnchorElement>, index: number) => {
    // A modified click opens a new tab/window as usual; a plain one renders and focuses the file.
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    onJump(index);
  };
  const renderDir = (dir: TTreeDir, depth: number) => (
    <ul className={depth === 0 ? "space-y-0.5" : "ml-3 space-y-0.5 border-l border-slate-200 pl-2"}>
      {dir.dirs.map((sub, i) =>
        firstRankOf.get(sub)! < shown ? (
          <li key={`d${i}`}>
            <span className="block whitespace-pre-wrap break-all font-mono text-xs text-slate-500">{sub.name}/</span>
            {renderDir(sub, depth + 1)}
          </li>
        ) : null,
      )}
      {dir.files.map(({ index, name }) => {
        if (rankOf[index]! >= shown) return null;
        const file = files[index]!;
        return (
          <li key={index}>
            <a
              href={`#${anchorIdOf(index)}`}
              onClick={(event) => onClick(event, index)}
              className="flex items-start gap-1.5 rounded px-1 py-0.5 text-xs text-slate-800 no-underline hover:bg-slate-100 hover:no-underline focus:outline-2 focus:outline-blue-600"
              data-testid="diff-tree-file"
              data-rank={rankOf[index]}
            >
              <StatusBadge status={file.status} />
              <span className="min-w-0 flex-1 whitespace-pre-wrap break-all font-mono">{name}</span>
              <span className="shrink-0 font-mono">
                {file.isBinary ? (
                  <span className="text-slate-500">bin</span>
                ) : (
                  <>
                    <span className="text-green-700">+{file.additions}</span>{" "}
                    <span className="text-red-700">−{file.deletions}</span>
                  </>
                )}
              </span>
            </a>
          </li>
        );
      })}
    </ul>
  );
  return (
    <nav
      ref={nav}
      aria-label="Changed files"
      data-testid="diff-file-tree"
      data-complete={shown >= files.length ? "true" : "false"}
    >
      {renderDir(tree, 0)}
      {shown < files.length ? (
        <ListMore remaining={files.length - shown} onListMore={listMore} onPress={onPressMore} />
      ) : null}
    </nav>
  );
});
