import Foundation
import PackagePlugin

/// Embeds the web viewer's files (the top-level `web/` folder: HTML, CSS
/// and JavaScript modules, no build step) into `WebViewerAssets` at build
/// time, so the single `history-server` binary serves them from any
/// working directory, as `EmbedMigrations` does for the schema.
@main
struct EmbedWebViewer: BuildToolPlugin {
    /// The kinds of file the viewer is made of; anything else in `web/`
    /// (an editor's backup, a stray note) stays out of the binary.
    static let servedExtensions: Set<String> = ["html", "css", "js", "svg", "txt"]

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "web")
        let files = try FileManager.default
            .contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { Self.servedExtensions.contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedWebAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) web viewer files",
                executable: try context.tool(named: "TextEmbedder").url,
                arguments: [output.path, "embeddedWebAssets", "text", "web/"] + files.map(\.path),
                inputFiles: files + [folder],
                outputFiles: [output]
            )
        ]
    }
}
