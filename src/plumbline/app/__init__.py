"""The application layer under the CLI: assembles inputs (reading the logs behind a leaderboard's
pages), runs analyses, calls views and writes what they render.

    from plumbline.app.site import load_site_inputs, write_site

    result = write_site(load_site_inputs([Path("leaderboard.json"), Path("logs/")]), Path("site"))
"""
