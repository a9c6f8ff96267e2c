/**
 * Every file an entry point loads through its static imports, as Bun's bundler resolves them (its metafile's inputs,
 * absolute paths): what starting that module parses and runs, without running it.
 */
async function staticImports(entry: string): Promise<string[]> {
  const result = await Bun.build({ entrypoints: [entry], target: "bun", metafile: true, throw: false });
  if (!result.success || !result.metafile) {
    throw new Error(`could not resolve the imports of ${entry}: ${result.logs.join("; ")}`);
  }
  return Object.keys(result.metafile.inputs);
}

/** The files of package `name` among `entry`'s static imports, as paths inside the package (`dist/index.js`). */
export async function packageImports(entry: string, name: string): Promise<string[]> {
  const marker = `/node_modules/${name}/`;
  return (await staticImports(entry)).flatMap((path) => {
    const at = path.lastIndexOf(marker);
    return at < 0 ? [] : [path.slice(at + marker.length)];
  });
}
