import Foundation
import PackagePlugin

/// Embeds the top-level `migrations/*.sql` files into the `HistoryStore`
/// module at build time.
///
/// Why a plugin: the server must find its schema when it is started from any
/// working directory, and resource bundles sit next to the binary only until
/// someone copies the binary alone. Generated source cannot get lost, and
/// `migrations/` stays the one place a migration is written.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let migrations = context.package.directoryURL.appending(path: "migrations")
        let files = try FileManager.default
            .contentsOfDirectory(at: migrations, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations",
                executable: try context.tool(named: "MigrationEmbedder").url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files + [migrations],
                outputFiles: [output]
            )
        ]
    }
}
