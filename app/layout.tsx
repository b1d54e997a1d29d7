import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";
import { SERVICE_NAME } from "@/lib/service";

export const metadata: Metadata = {
  title: SERVICE_NAME,
  description: "Self-hosted catalog for Lance tables",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-white text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">{children}</body>
    </html>
  );
}
