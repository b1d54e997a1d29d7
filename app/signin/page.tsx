import { redirect } from "next/navigation";
import { getServerSession } from "next-auth";
import { authOptions } from "@/server/auth/next-auth";
import { oidcConfigFromEnv } from "@/server/auth/tokens";
import { SignInForm } from "@/components/auth/sign-in-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · Quiver" };

/** Only relative callback addresses are followed, so sign-in cannot be used to redirect elsewhere. */
function safeCallback(raw: string | string[] | undefined): string {
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value && value.startsWith("/") && !value.startsWith("//") ? value : "/";
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const callbackUrl = safeCallback(params.callbackUrl);
  if (await getServerSession(await authOptions())) redirect(callbackUrl);
  const oidc = oidcConfigFromEnv();
  return (
    <main className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-6">
      <h1 className="text-2xl font-semibold tracking-tight">Sign in to Quiver</h1>
      <p className="mt-1 text-sm text-slate-500 dark:text-slate-400">The catalog for your Lance tables.</p>
      <SignInForm oidcEnabled={Boolean(oidc?.clientId)} callbackUrl={callbackUrl} error={typeof params.error === "string" ? params.error : undefined} />
    </main>
  );
}
