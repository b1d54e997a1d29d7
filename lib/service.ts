import packageJson from "@/package.json";

export const SERVICE_NAME = "Quiver";
export const SERVICE_VERSION: string = packageJson.version;
