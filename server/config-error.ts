/** A setting the server cannot start with; its message is one line naming the setting and what is wrong. */
import "server-only";
export class ConfigError extends Error {
  override name = "ConfigError";
}
