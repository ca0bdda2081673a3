// `ipdirect config init` on a real terminal (tmux): it asks for the provider, account, endpoint
// and secret, never shows the secret, and writes them into a 0600 file that loads.
import Foundation
import TestSupport
import Testing

@Suite(
    "config init asks on a terminal", .serialized, .enabled(if: TmuxPane.available, "tmux is not installed"))
struct ConfigInitPromptTests {
    @Test("the answers land in the file (the secret unseen on screen, quoted as TOML), and config show reads them")
    func answersWritten() async throws {
        let secret = "s3cr'\"et-never-shown"
        let terminal = try await TmuxTerminal.start(width: 120, height: 24) { directory in
            "cd '\(directory)' && HOME='\(directory)' '\(Tmux.binary)' config init --config '\(directory)/c.toml'; "
                + "echo CONFIG-INIT-EXITED-$?; HOME='\(directory)' '\(Tmux.binary)' config show --config '\(directory)/c.toml'"
        }
        defer { terminal.close() }
        let pane = terminal.pane
        _ = await pane.wait(for: "Provider (")
        try await pane.type("alicloud")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Account ID")
        try await pane.type("139450")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Endpoint")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Signing secret")
        try await pane.type(secret)
        try await pane.send("Enter")
        // config init, then config show, whose table scrolls the questions off the screen: read
        // its history too.
        await pane.waitForExit()
        let screen = await pane.screenAndHistory()
        #expect(screen.contains("CONFIG-INIT-EXITED-0"), "\(screen)")
        #expect(!screen.contains("never-shown"), "the secret was echoed: \(screen)")
        let path = terminal.directory + "/c.toml"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\nprovider = \"alicloud\"\n") && text.contains("\naccount = \"139450\"\n"), "\(text)")
        #expect(text.contains("\nsecret = \"s3cr'\\\"et-never-shown\"\n"), "\(text)")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        // The file loads: config show reads the provider and account back, the secret redacted.
        let shown = await pane.screenAndHistory()
        #expect(shown.contains("alicloud") && !shown.contains("never-shown"), "\(shown)")
    }
}
