"""Static HTML reports for plumbline's three jobs: a self-contained site from their JSON outputs.

    from plumbline.app.site import load_site_inputs, write_site

    result = write_site(load_site_inputs([Path("leaderboard.json"), Path("logs/")]), Path("site"))

Pages are rendered with Jinja2 (autoescape on), plots are inline SVG (`report.svg`), and CSS and
the few behaviours are inlined, so the site works offline from `file://`.
"""
