/** A setting the server cannot start with; its message is one line naming the setting and what is wrong. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
