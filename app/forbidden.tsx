import Link from "next/link";

export default function Forbidden() {
  return (
    <section className="space-y-2" data-testid="forbidden">
      <h1>403 — Not allowed</h1>
      <p>Your role does not give access to this page.</p>
      <Link href="/">Back to your start page</Link>
    </section>
  );
}
