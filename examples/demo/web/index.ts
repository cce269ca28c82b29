export const apiBase = "/api";
