"""The Debian 12 virtual machine the test suite runs in: ``make vm`` builds its image
(``vm.image``), ``make vm-test`` and ``make vm-shell`` boot it with qemu (``vm.boot``).
Host side only, standard library only: it needs neither the project's virtualenv nor
its dependencies, so it runs before any set-up."""
