/**
 * Tests on a fixture that may be missing here (an sshd, a pid or mount namespace): each states
 * only its name and body, and is ignored, not failed, where the fixture cannot be had.
 *
 * @module
 */

/** Declares one test by its name and body. */
export type FixtureTest = (name: string, fn: () => Promise<void>) => void;

/**
 * How a file declares its tests on a fixture: each is ignored when `skip` says why the fixture
 * is missing here (null: it is there; the file says why once, on stderr). `sanitize: false`
 * turns Deno's resource and op sanitizers off, for tests that use the file's shared sshd: its
 * log is read, and its connections run, across tests.
 */
export function fixtureTest(skip: string | null, { sanitize = true } = {}): FixtureTest {
  return (name, fn) =>
    Deno.test({
      name,
      ignore: skip !== null,
      ...(sanitize ? {} : { sanitizeResources: false, sanitizeOps: false }),
      fn,
    });
}
