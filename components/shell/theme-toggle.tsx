"use client";
import { useState } from "react";
import { rememberTheme, THEMES, type Theme } from "@/lib/theme";

export function ThemeToggle({ initial }: { initial: Theme }) {
  const [theme, setTheme] = useState<Theme>(initial);
  function choose(next: Theme) {
    setTheme(next);
    document.documentElement.classList.remove(...THEMES);
    document.documentElement.classList.add(next);
    rememberTheme(next);
  }
  return (
    <div role="radiogroup" aria-label="Theme" className="flex rounded-md border border-slate-300 text-xs dark:border-slate-600">
      {THEMES.map((t) => (
        <button
          key={t}
          type="button"
          role="radio"
          aria-checked={theme === t}
          onClick={() => choose(t)}
          className={`px-2 py-1 capitalize first:rounded-l-md last:rounded-r-md focus-visible:outline-2 focus-visible:outline-indigo-500 ${
            theme === t
              ? "bg-slate-800 text-white dark:bg-slate-200 dark:text-slate-900"
              : "text-slate-600 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800"
          }`}
        >
          {t}
        </button>
      ))}
    </div>
  );
}
