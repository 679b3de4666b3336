import Link from "next/link";

export default function NotFound() {
  return (
    <section className="space-y-2" data-testid="not-found">
      <h1>404 — Not found</h1>
      <p>There is nothing here, or it is not yours to see.</p>
      <Link href="/">Back to your start page</Link>
    </section>
  );
}
