/** Finds the route a method and path name, with the path's parameters percent-decoded. */
import "server-only";
import { invalidInput } from "../errors";
import type { RouteDef } from "./route";
import type { Method } from "@/lib/contract/operation";

interface Match {
  route: RouteDef;
  params: Record<string, string>;
}

function splitPath(pathname: string): string[] {
  const parts = pathname.split("/").slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

function matchPath(template: string, segments: string[]): Record<string, string> | null {
  const pattern = splitPath(template);
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith("{") && p.endsWith("}")) {
      try {
        params[p.slice(1, -1)] = decodeURIComponent(segments[i]);
      } catch {
        throw invalidInput(`path segment '${segments[i]}' is not valid percent-encoding`);
      }
    } else if (p !== segments[i]) return null;
  }
  return params;
}

export function findRoute(routes: RouteDef[], method: string, pathname: string): Match | { allowed: Method[] } | null {
  const segments = splitPath(pathname);
  const allowed: Method[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, segments);
    if (!params) continue;
    if (route.methods.includes(method as Method)) return { route, params };
    allowed.push(...route.methods);
  }
  return allowed.length ? { allowed } : null;
}
