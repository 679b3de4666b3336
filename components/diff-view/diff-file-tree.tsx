import { memo, type MouseEvent } from "react";
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { StatusBadge } from "./status-badge";

/** 1,000 files are 1,000 links: only those in the tree's scroll window are rendered by the browser. */
const TREE_ITEM_STYLE = { contentVisibility: "auto", containIntrinsicSize: "auto 22px" } as const;

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

/** The changed files as a tree; each file is a link to its section (works without JavaScript too). */
export const DiffFileTree = memo(function DiffFileTree({ files, anchorIdOf, onJump }: TProps) {
  const tree = buildFileTree(files.map((f) => f.path));
  const onClick = (event: MouseEvent<HTMLAnchorElement>, index: number) => {
    // A modified click opens a new tab/window as usual; a plain one renders and focuses the file.
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    onJump(index);
  };
  const renderDir = (dir: TTreeDir, depth: number) => (
    <ul className={depth === 0 ? "space-y-0.5" : "ml-3 space-y-0.5 border-l border-slate-200 pl-2"}>
      {dir.dirs.map((sub, i) => (
        <li key={`d${i}`}>
          <span className="block whitespace-pre-wrap break-all font-mono text-xs text-slate-500">{sub.name}/</span>
          {renderDir(sub, depth + 1)}
        </li>
      ))}
      {dir.files.map(({ index, name }) => {
        const file = files[index]!;
        return (
          // Off-screen entries of a long tree skip style, layout and paint (content-visibility).
          <li key={index} style={TREE_ITEM_STYLE}>
            <a
              href={`#${anchorIdOf(index)}`}
              onClick={(event) => onClick(event, index)}
              className="flex items-start gap-1.5 rounded px-1 py-0.5 text-xs text-slate-800 no-underline hover:bg-slate-100 hover:no-underline focus:outline-2 focus:outline-blue-600"
              data-testid="diff-tree-file"
            >
              <StatusBadge status={file.status} />
              <span className="min-w-0 flex-1 whitespace-pre-wrap break-all font-mono">{name}</span>
              <span className="shrink-0 font-mono">
                {file.isBinary ? (
                  <span className="text-slate-500">bin</span>
                ) : (
                  <>
                    <span className="text-green-700">+{file.additions}</span> <span className="text-red-700">−{file.deletions}</span>
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
    <nav aria-label="Changed files" data-testid="diff-file-tree">
      {renderDir(tree, 0)}
    </nav>
  );
});
