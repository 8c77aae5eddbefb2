import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reportedVersion } from '../../src/build-info/reported-version.ts';
import { majorMinor, type ServerVersion } from '../../src/build-info/server-version.ts';

const own: ServerVersion = {
  gitVersion: 'v0.1.0-7-g5e1b475',
  gitMajor: '0',
  gitMinor: '1',
  gitCommit: '5e1b4758be63a3630441ee063eeb2e25d2231d4b',
  gitTreeState: 'clean',
  buildDate: '2026-11-23T21:59:55Z',
  nodeVersion: 'v24.21.0',
  compiler: 'tsc 6.0.3',
  platform: 'linux/amd64',
};
const ownBuild = { version: own.gitVersion, gitCommit: own.gitCommit, buildDate: own.buildDate };

describe('the version /kapis/version reports', () => {
  test("under the original's platform name: its release, in its field order, and our build beside it", () => {
    const reported = reportedVersion(own, { platformName: 'kubesphere', compatibleRelease: 'v3.4.1' });
    assert.deepEqual(reported, {
      ...own,
      gitVersion: 'v3.4.1',
      gitMajor: '3',
      gitMinor: '4',
      platformApiserver: ownBuild,
    });
    assert.deepEqual(Object.keys(reported), [...Object.keys(own), 'platformApiserver']);
  });

  test('the release is a setting', () => {
    const reported = reportedVersion(own, { platformName: 'kubesphere', compatibleRelease: 'v3.3.2' });
    assert.deepEqual([reported.gitVersion, reported.gitMajor, reported.gitMinor], ['v3.3.2', '3', '3']);
  });

  test('under any other platform name: ours, whatever the release setting says', () => {
    for (const platformName of ['platform', 'acme', 'kubesphere-lab']) {
      const reported = reportedVersion(own, { platformName, compatibleRelease: 'v3.4.1' });
      assert.deepEqual(reported, { ...own, platformApiserver: ownBuild }, platformName);
    }
  });

  test('major and minor numbers of a version', () => {
    assert.deepEqual(majorMinor('v3.4.1'), { major: '3', minor: '4' });
    assert.deepEqual(majorMinor('v10.12.0-rc.1-dirty'), { major: '10', minor: '12' });
    assert.deepEqual(majorMinor('unknown'), { major: '', minor: '' });
  });
});
