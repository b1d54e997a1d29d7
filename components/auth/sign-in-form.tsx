"use client";
import { useState } from "react";
import { signIn } from "next-auth/react";
import { Button, Field, TextInput } from "../ui/controls";
import { useHydrated } from "../ui/use-hydrated";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "That access key is not valid, has expired or was revoked.",
  OAuthSignin: "The identity provider could not be reached.",
  OAuthCallback: "The identity provider's answer could not be verified.",
  AccessDenied: "Access was denied.",
};

export function SignInForm({ oidcEnabled, callbackUrl, error }: { oidcEnabled: boolean; callbackUrl: string; error?: string }) {
  const [key, setKey] = useState("");
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState(error ? (MESSAGES[error] ?? "Sign-in failed.") : null);
  const hydrated = useHydrated();

  async function submitKey(event: React.FormEvent) {
    event.preventDefault();
    setPending(true);
    setFailure(null);
    const result = await signIn("access-key", { key, redirect: false, callbackUrl });
    setPending(false);
    if (!result || result.error) setFailure(MESSAGES.CredentialsSignin);
    else window.location.assign(callbackUrl);
  }

  return (
    <div className="mt-8 flex flex-col gap-6" data-hydrated={hydrated}>
      {failure && (
        <p
          role="alert"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
        >
          {failure}
        </p>
      )}
      {oidcEnabled && (
        <Button type="button" onClick={() => signIn("oidc", { callbackUrl })} className="py-2">
          Sign in with OpenID Connect
        </Button>
      )}
      <form onSubmit={submitKey} className="flex flex-col gap-3" aria-label="Sign in with an access key">
        <Field label="Access key" htmlFor="access-key" hint="An API key from an administrator, or the admin key printed at first start.">
          <TextInput id="access-key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} placeholder="qvr_…" required />
        </Field>
        <Button type="submit" variant={oidcEnabled ? "secondary" : "primary"} disabled={pending || key.trim() === ""}>
          {pending ? "Signing in…" : "Sign in with access key"}
        </Button>
      </form>
    </div>
  );
}
