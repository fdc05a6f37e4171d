/**
 * Request templates over the shared fixtures: `{item}` and `{mosaic}` stand for the URL-encoded URLs
 * of the fixture STAC item and mosaic (as the file server serves them), `{file:NAME}` for a fixture
 * file's. One reading for the reference-tile script and the tests that replay its requests.
 */
export function resolveFixtureUrls(template: string, fileserver: string): string {
  return template
    .replaceAll('{item}', encodeURIComponent(`${fileserver}/item.json`))
    .replaceAll('{mosaic}', encodeURIComponent(`${fileserver}/mosaic.json`))
    .replace(/\{file:([\w.]+)\}/g, (_, name: string) => encodeURIComponent(`${fileserver}/${name}`));
}
