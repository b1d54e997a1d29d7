import type { ReactNode } from "react";
import { Suspense } from "react";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { getServerSession } from "next-auth";
import { authOptions } from "@/server/auth/next-auth";
import { parseTheme, THEME_COOKIE } from "@/lib/theme";
import { Providers } from "@/components/shell/providers";
import { AppShell } from "@/components/shell/app-shell";

export const dynamic = "force-dynamic";

/** Every console page needs a session; without one the browser goes to sign-in and comes back. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const session = await getServerSession(await authOptions());
  if (!session) {
    const path = (await headers()).get("x-quiver-path") ?? "/";
    redirect(`/signin?callbackUrl=${encodeURIComponent(path)}`);
  }
  const theme = parseTheme((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <Providers>
      <Suspense>
        <AppShell theme={theme} userName={session.user?.name ?? session.user?.email ?? "signed in"}>
          {children}
        </AppShell>
      </Suspense>
    </Providers>
  );
}
