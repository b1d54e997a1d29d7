import NextAuth from "next-auth";
import { authOptions } from "@/server/auth/next-auth";

export const dynamic = "force-dynamic";

async function handler(request: Request, context: { params: Promise<{ nextauth: string[] }> }) {
  return NextAuth(request as never, context as never, await authOptions());
}

export { handler as GET, handler as POST };
