import NextAuth from "next-auth";
import { getAuthOptions } from "@/app/_server/auth-options";

type RouteContext = { params: Promise<{ nextauth: string[] }> };

async function handle(request: Request, context: RouteContext) {
  return NextAuth(request as never, { params: await context.params } as never, getAuthOptions());
}

export { handle as GET, handle as POST };
