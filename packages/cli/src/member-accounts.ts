// A gateway inside a member process authenticates from the member's own metadata replica: an
// AccountDirectory replaced synchronously on every change the member applies (so the member's
// admin calls, which wait for this push, return only once it is in force here too).

import { AccountDirectory } from '@spoolmq/gateway';
import type { Member } from '@spoolmq/member';

/** The directory of `member`'s accounts, kept current until the member closes. */
export function memberDirectory(member: Member): AccountDirectory {
  const directory = new AccountDirectory();
  directory.replace(member.authTable());
  member.onAuthChange(() => directory.replace(member.authTable()));
  return directory;
}
