import Foundation
import PackagePlugin

/// Embeds a store's migration files into its module at build time: the
/// top-level `migrations/*.sql` into `HistoryStore` (SQLite), and
/// `migrations/postgres/*.sql` into `HistoryPostgres`.
///
/// Why a plugin: the server must find its schema when it is started from any
/// working directory, and resource bundles sit next to the binary only until
/// someone copies the binary alone. Generated source cannot get lost, and
/// `migrations/` stays the one place a migration is written.
@main
struct EmbedMigrations: BuildToolPlugin {
    /// The folder under `migrations/` that holds each target's files; a
    /// target not listed gets the top-level ones. Each engine has its own
    /// numbered series, since their SQL dialects differ.
    static let folderByTarget = ["HistoryPostgres": "postgres"]

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        var migrations = context.package.directoryURL.appending(path: "migrations")
        if let folder = Self.folderByTarget[target.name] {
            migrations = migrations.appending(path: folder)
        }
        let files = try FileManager.default
            .contentsOfDirectory(at: migrations, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations",
                executable: try context.tool(named: "TextEmbedder").url,
                arguments: [output.path, "embeddedMigrationFiles", "sql", "migrations/"] + files.map(\.path),
                inputFiles: files + [migrations],
                outputFiles: [output]
            )
        ]
    }
}
