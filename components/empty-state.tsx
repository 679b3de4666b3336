export function EmptyState({ title, children }: { title: string; children?: React.ReactNode }) {
  return (
    <div
      className="rounded border border-dashed border-slate-300 bg-white p-6 text-center text-slate-600"
      data-testid="empty-state"
    >
      <p className="font-medium text-slate-800">{title}</p>
      {children && <div className="mt-1 text-sm">{children}</div>}
    </div>
  );
}
