// Defaults the command table and the commands both read, kept below both: when the table held DEFAULT_SERVER,
// connection.ts imported the table and so every command, and src/cli was one import circle.

/** DEFAULT_SERVER is where the client commands look for a kevents server by default. */
export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
