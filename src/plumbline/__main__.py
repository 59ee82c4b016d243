from plumbline.cli.main import main

main()
