/** UserInfo is who a request comes from (user.Info): a name, a uid and groups. */
export interface UserInfo {
  username: string;
  uid: string;
  groups: string[];
  /** extra is what a front proxy told of the user besides its name and groups (X-Remote-Extra-*), passed on to a SubjectAccessReview. */
  extra?: Record<string, string[]>;
}

/** AUTHENTICATED_GROUP is the group kube-apiserver adds to every authenticated user. */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** READERS_GROUP may get, list and watch every kevents resource. */
export const READERS_GROUP = 'kevents:readers';

/** WRITERS_GROUP may read, and create, update, patch and delete. */
export const WRITERS_GROUP = 'kevents:writers';

/** ARCHIVERS_GROUP may write the archive's own `archive.kevents.io/*` labels and annotations (as a mirror writing through the API would). */
export const ARCHIVERS_GROUP = 'kevents:archivers';

/** MASTERS_GROUP may do anything, as in kube-apiserver. */
export const MASTERS_GROUP = 'system:masters';

/** Authenticator turns a bearer token into a user, or undefined when the token is unknown. */
export interface Authenticator {
  authenticateToken(token: string): UserInfo | undefined | Promise<UserInfo | undefined>;
}

/** withAuthenticatedGroup adds system:authenticated to a user's groups, once. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
